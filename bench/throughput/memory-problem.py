"""A tiny problem for the orchestrator-memory batch of bench/throughput: y = relu(x * scale + bias).

Small on purpose (16 x 256): the batch measures kforge's own process over many candidates, not
the candidates.
"""
import torch

batch_size = 16
features = 256


class Model(torch.nn.Module):
    def __init__(self, features):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.randn(features))
        self.bias = torch.nn.Parameter(torch.randn(features))

    def forward(self, x):
        return torch.relu(x * self.scale + self.bias)


def get_inputs():
    return [torch.randn(batch_size, features)]


def get_init_inputs():
    return [features]
