"""ResNet basic block: two 3x3 conv+BatchNorm layers with a 1x1 conv+BatchNorm projection shortcut."""
import torch
import torch.nn as nn

in_channels = 3
out_channels = 64
stride = 1
batch_size = 10
num_classes = 1000

QUIRKS = ["batchnorm_train_stats"]


class Model(nn.Module):
    expansion = 1

    def __init__(self, in_channels, out_channels, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(out_channels, out_channels, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.downsample = nn.Sequential(
            nn.Conv2d(in_channels, out_channels * self.expansion, kernel_size=1, stride=stride, bias=False),
            nn.BatchNorm2d(out_channels * self.expansion),
        )
        self.stride = stride

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


def get_inputs():
    return [torch.rand(batch_size, in_channels, 224, 224)]


def get_init_inputs():
    return [in_channels, out_channels, stride]
