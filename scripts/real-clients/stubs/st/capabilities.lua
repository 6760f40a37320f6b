-- Stub of the hub's st.capabilities: Wemo's parser only indexes it when it
-- parses a device's event, which the wemo case never sends.
return {}
