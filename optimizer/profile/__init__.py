"""L2 profiling back ends: roofline figures, CUDA (torch.profiler, ncu) and Ascend (torch-npu, msprof)."""
