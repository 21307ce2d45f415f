"""2-D convolution, stride 1, "same" padding, with bias.

x: (batch_size, in_channels, height, width) float32 ->
y: (batch_size, out_channels, height, width); weight: (out_channels, in_channels, k, k), bias: (out_channels,).
gpu preset: (64, 128 -> 128, 128 x 128, k = 3): 2 N Co H W Ci k^2 = 309 GFLOP, 512 MiB in + 512 MiB out;
compute-bound (~5 ms at 60 TFLOP/s fp32, ~0.8 ms at 400 TFLOP/s tf32, which cuDNN uses by default).
"""
import torch

batch_size = 64
in_channels = 128
out_channels = 128
height = 128
width = 128
kernel_size = 3

KFORGE_PRESETS = {
    "cpu": {"batch_size": 8, "in_channels": 16, "out_channels": 32, "height": 64, "width": 64},
    "gpu": {"batch_size": 64, "in_channels": 128, "out_channels": 128, "height": 128, "width": 128},
}


class Model(torch.nn.Module):
    """nn.Conv2d with padding kernel_size // 2."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
