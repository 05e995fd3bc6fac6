"""The hosted arena: bots registered on a server (``registry``) that connect from anywhere with
their own token, and the operator's service to manage them (``service``)."""
