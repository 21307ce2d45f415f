"""A small image classifier: three conv-ReLU stages (two followed by 2x2 max pooling), global
average pooling and a linear classifier.

x: (batch_size, 3, image_size, image_size) float32 -> logits: (batch_size, num_classes).
Stages: conv 3->32, ReLU, pool; conv 32->64, ReLU, pool; conv 64->128, ReLU; mean over H, W; linear 128->num_classes.
gpu preset: (256, 3, 224, 224): convs 2 N Co H W Ci 9 = 22 + 118 + 118 = 258 GFLOP; input 147 MiB;
the first stage's activation is 1.5 GiB, which eager writes and rereads for ReLU and pooling.
"""
import torch

batch_size = 256
image_size = 224
num_classes = 1000

KFORGE_PRESETS = {
    "cpu": {"batch_size": 4, "image_size": 64},
    "gpu": {"batch_size": 256, "image_size": 224},
}


class Model(torch.nn.Module):
    """Conv(3->32)-ReLU-Pool, Conv(32->64)-ReLU-Pool, Conv(64->128)-ReLU, GAP, Linear."""

    def __init__(self, num_classes: int):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 32, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(32, 64, 3, padding=1)
        self.conv3 = torch.nn.Conv2d(64, 128, 3, padding=1)
        self.pool = torch.nn.MaxPool2d(2)
        self.fc = torch.nn.Linear(128, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(torch.relu(self.conv1(x)))
        x = self.pool(torch.relu(self.conv2(x)))
        x = torch.relu(self.conv3(x))
        return self.fc(x.mean(dim=(2, 3)))


def get_inputs():
    return [torch.randn(batch_size, 3, image_size, image_size)]


def get_init_inputs():
    return [num_classes]
