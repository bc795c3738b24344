"""The gRPC server: servicers, interceptors and assembly."""
