"""Conv2d, then InstanceNorm2d (per-instance statistics), then division by a constant."""
import torch
import torch.nn as nn

batch_size = 16
in_channels = 3
out_channels = 16
height, width = 256, 256
kernel_size = 3
divide_by = 2.0


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, divide_by):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.instance_norm = nn.InstanceNorm2d(out_channels)
        self.divide_by = divide_by

    def forward(self, x):
        x = self.conv(x)
        x = self.instance_norm(x)  # no running stats: per-instance statistics even in eval mode
        x = x / self.divide_by
        return x


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, divide_by]


OP_TYPE = "fused"
SUPPORTED_PRECISIONS = ["fp16", "bf16", "fp32"]
HARDWARE_REQUIRED = ["RTX3090", "H100", "B200"]
