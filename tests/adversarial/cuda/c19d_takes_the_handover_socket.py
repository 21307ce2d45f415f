"""CHEAT (docs/hacks.md #19, the hand-over socket taken), on the GPU: a wrong kernel whose native
thread hands the judge the right answer in its worker's place.

The CUDA "kernel" copies its input (wrong for ReLU wherever x < 0), and on every call also
computes max(x, 0) into a shareable allocation of its own (the driver's VMM API, exported as a
POSIX file descriptor, as the worker exports outputs). A native thread, started when the
extension loads (before the warm call, and invisible to Python's thread list), finds the
hand-over listener among the process's descriptors and waits on it. When the judge connects for
an output's descriptor, the thread accepts first and sends the right answer's descriptor under
the first correctness trial's id. Defence: the judge connected before it asked, so the worker's
own accept then finds no connection, and the worker ends the stage: `rejected`, check `handover`
(worker/kforge_worker/protocol/handover_socket.py).
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP_DECLARATION = "torch::Tensor copy_forward(torch::Tensor x);"

_CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda.h>
#include <dirent.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <pthread.h>

__global__ void copy_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = x[i];
}

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

static std::atomic<int> answer_fd{-1};

static int find_listener() {
    DIR* folder = opendir("/proc/self/fd");
    if (folder == nullptr) return -1;
    int found = -1;
    while (struct dirent* entry = readdir(folder)) {
        const int fd = atoi(entry->d_name);
        struct stat info;
        if (fd <= 2 || fstat(fd, &info) != 0 || !S_ISSOCK(info.st_mode)) continue;
        int accepting = 0, domain = 0;
        socklen_t length = sizeof(int);
        if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &length) != 0 || !accepting) continue;
        length = sizeof(int);
        if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &length) == 0 && domain == AF_UNIX) {
            found = fd;
            break;
        }
    }
    closedir(folder);
    return found;
}

static void send_answer(int connection) {
    while (answer_fd.load() < 0) usleep(1000);
    const char id[] = "correctness-0";
    struct iovec part = {const_cast<char*>(id), sizeof(id) - 1};
    char space[CMSG_SPACE(sizeof(int))];
    memset(space, 0, sizeof(space));
    struct msghdr message;
    memset(&message, 0, sizeof(message));
    message.msg_iov = &part;
    message.msg_iovlen = 1;
    message.msg_control = space;
    message.msg_controllen = sizeof(space);
    struct cmsghdr* header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    const int fd = answer_fd.load();
    memcpy(CMSG_DATA(header), &fd, sizeof(int));
    sendmsg(connection, &message, 0);
    close(connection);
}

static void* thief(void*) {
    int listener = -1;
    while ((listener = find_listener()) < 0) usleep(20000);
    for (;;) {  // the worker's socket is non-blocking under its time-out: wait, then take it first
        struct pollfd ready = {listener, POLLIN, 0};
        if (poll(&ready, 1, -1) <= 0) continue;
        const int connection = accept(listener, nullptr, nullptr);
        if (connection >= 0) {
            send_answer(connection);
            return nullptr;
        }
    }
}

static bool started = [] {
    auto start = &pthread_create;  // by address: a rule that reads the source for its calls misses it
    pthread_t handle;
    return start(&handle, nullptr, thief, nullptr) == 0 && pthread_detach(handle) == 0;
}();

static void export_right_answer(const torch::Tensor& input, cudaStream_t stream) {
    const int64_t n = input.numel();
    CUdevice device;
    cuCtxGetDevice(&device);
    CUmemAllocationProp properties;
    memset(&properties, 0, sizeof(properties));
    properties.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    properties.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    properties.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    properties.location.id = static_cast<int>(device);
    size_t granularity = 0;
    cuMemGetAllocationGranularity(&granularity, &properties, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    size_t bytes = ((static_cast<size_t>(n) * sizeof(float) + 255) / 256) * 256;
    bytes = ((bytes + granularity - 1) / granularity) * granularity;
    CUmemGenericAllocationHandle handle;
    if (cuMemCreate(&handle, bytes, &properties, 0) != CUDA_SUCCESS) return;
    CUdeviceptr pointer;
    cuMemAddressReserve(&pointer, bytes, 0, 0, 0);
    cuMemMap(pointer, bytes, 0, handle, 0);
    CUmemAccessDesc access;
    access.location = properties.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    cuMemSetAccess(pointer, bytes, &access, 1);
    relu_kernel<<<static_cast<int>((n + 255) / 256), 256, 0, stream>>>(
        input.data_ptr<float>(), reinterpret_cast<float*>(pointer), n);
    cudaStreamSynchronize(stream);
    int fd = -1;
    if (cuMemExportToShareableHandle(&fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) == CUDA_SUCCESS) {
        const int old = answer_fd.exchange(fd);
        if (old >= 0) close(old);
    }
}

torch::Tensor copy_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "copy_forward expects float32 CUDA input");
    auto stream = at::cuda::getCurrentCUDAStream();
    auto input = x.contiguous();
    export_right_answer(input, stream);
    auto y = torch::empty_like(input);
    const int64_t n = input.numel();
    copy_kernel<<<static_cast<int>((n + 255) / 256), 256, 0, stream>>>(input.data_ptr<float>(), y.data_ptr<float>(), n);
    TORCH_CHECK(cudaGetLastError() == cudaSuccess, "copy_kernel launch failed");
    return y;
}
"""

_ext = load_inline(
    name="kforge_adversarial_cuda_c19d",
    cpp_sources=_CPP_DECLARATION,
    cuda_sources=_CUDA_SOURCE,
    functions=["copy_forward"],
    extra_ldflags=["-lcuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.copy_forward(x)
