"""Conv2d (3x3, same padding, bias) -> ReLU -> MaxPool2d(2).

x: (batch_size, in_channels, height, width) float32 -> y: (batch_size, out_channels, height/2, width/2).
gpu preset: (64, 64 -> 128, 128 x 128): conv 2 N Co H W Ci k^2 = 155 GFLOP; 256 MiB in, 128 MiB out
when fused (eager also writes and rereads a 512 MiB conv output, twice).
"""
import torch

batch_size = 64
in_channels = 64
out_channels = 128
height = 128
width = 128
kernel_size = 3
pool_size = 2

KFORGE_PRESETS = {
    "cpu": {"batch_size": 8, "in_channels": 16, "out_channels": 32, "height": 64, "width": 64},
    "gpu": {"batch_size": 64, "in_channels": 64, "out_channels": 128, "height": 128, "width": 128},
}


class Model(torch.nn.Module):
    """Convolution, ReLU, 2x2 max pooling."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, pool_size: int):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.pool = torch.nn.MaxPool2d(pool_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(torch.relu(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, pool_size]
