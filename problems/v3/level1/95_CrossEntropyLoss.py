"""Mean cross-entropy loss of (batch_size, num_classes) logits against integer class targets."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
num_classes = 1024
input_shape = (num_classes,)
dim = 1  # defined upstream but unused


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(predictions, targets)


def get_inputs():
    predictions = torch.randn(batch_size, *input_shape)
    targets = torch.randint(0, num_classes, (batch_size,))
    return [predictions, targets]


def get_init_inputs():
    return []


OP_TYPE = "reduction"
SUPPORTED_PRECISIONS = ["fp16", "bf16", "fp32"]
HARDWARE_REQUIRED = ["RTX3090", "H100", "B200"]
