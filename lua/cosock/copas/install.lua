--- cosock.copas.install: requiring it makes cosock.copas the `copas` of the
--- program (cosock.copas.install()), so an installed cosock-native runs a
--- copas program unchanged with `lua -l cosock.copas.install program.lua`.
return require("cosock.copas").install()
