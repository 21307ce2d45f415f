"""The device itself: selection and synchronisation, the CUDA runtime through ctypes, on-device
digests, and the memory a process holds."""
