"""A single Conv2d 3 -> 96, kernel 11, stride 4, padding 2 (AlexNet's first layer)."""
import torch
import torch.nn as nn

batch_size = 256
num_classes = 1000


class Model(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        # num_classes is accepted but unused
        self.conv1 = nn.Conv2d(in_channels=3, out_channels=96, kernel_size=11, stride=4, padding=2)

    def forward(self, x):
        return self.conv1(x)


def get_inputs():
    x = torch.rand(batch_size, 3, 224, 224)
    return [x]


def get_init_inputs():
    return [num_classes]
