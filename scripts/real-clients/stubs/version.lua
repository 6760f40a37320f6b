-- Stub of the hub's version module: the API level the drivers test for (9, the
-- level of current hubs).
return { api = 9 }
