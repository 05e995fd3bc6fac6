"""The referee on the network: the gRPC service and server, operator auth, TLS, the runtime
(trio as a guest of asyncio on one thread) and the process's log set-up."""
