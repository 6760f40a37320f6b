-- Stub of the hub's st.json: the system's dkjson has the same encode/decode.
local dkjson = require "dkjson"
return { encode = dkjson.encode, decode = dkjson.decode }
