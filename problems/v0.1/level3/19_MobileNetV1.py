"""MobileNetV1: a strided conv-BN-ReLU stem, thirteen depthwise-separable blocks, 7x7 average pool, classifier."""
import torch
import torch.nn as nn

batch_size = 10
input_channels = 3
height = 224
width = 224
num_classes = 1000
alpha = 1.0

QUIRKS = ["batchnorm_train_stats"]


class Model(nn.Module):
    def __init__(self, num_classes=1000, input_channels=3, alpha=1.0):
        super().__init__()

        def conv_bn(inp, oup, stride):
            return nn.Sequential(
                nn.Conv2d(inp, oup, 3, stride, 1, bias=False),
                nn.BatchNorm2d(oup),
                nn.ReLU(inplace=True),
            )

        def conv_dw(inp, oup, stride):
            return nn.Sequential(
                nn.Conv2d(inp, inp, 3, stride, 1, groups=inp, bias=False),
                nn.BatchNorm2d(inp),
                nn.ReLU(inplace=True),
                nn.Conv2d(inp, oup, 1, 1, 0, bias=False),
                nn.BatchNorm2d(oup),
                nn.ReLU(inplace=True),
            )

        def c(n):
            return int(n * alpha)

        self.model = nn.Sequential(
            conv_bn(input_channels, c(32), 2),
            conv_dw(c(32), c(64), 1),
            conv_dw(c(64), c(128), 2),
            conv_dw(c(128), c(128), 1),
            conv_dw(c(128), c(256), 2),
            conv_dw(c(256), c(256), 1),
            conv_dw(c(256), c(512), 2),
            conv_dw(c(512), c(512), 1),
            conv_dw(c(512), c(512), 1),
            conv_dw(c(512), c(512), 1),
            conv_dw(c(512), c(512), 1),
            conv_dw(c(512), c(512), 1),
            conv_dw(c(512), c(1024), 2),
            conv_dw(c(1024), c(1024), 1),
            nn.AvgPool2d(7),
        )
        self.fc = nn.Linear(c(1024), num_classes)

    def forward(self, x):
        x = self.model(x)
        x = x.view(x.size(0), -1)
        return self.fc(x)


def get_inputs():
    return [torch.rand(batch_size, input_channels, height, width)]


def get_init_inputs():
    return [num_classes, input_channels, alpha]
