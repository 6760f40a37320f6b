-- Stub of the base64 module cosock/lustre's handshake key loads (the hub's
-- st.base64 under another name): encoding only.
return require "st.base64"
