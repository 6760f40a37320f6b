-- Stub of the hub's xml2lua: loaded by Wemo's parser, never called by the case.
return {}
