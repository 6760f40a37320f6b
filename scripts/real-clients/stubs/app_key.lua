-- Stub of the Sonos driver's app_key module (its API key, not published).
return "case-api-key"
