"""Cross-entropy loss (mean) of logits against int64 class indices."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32768
num_classes = 4096
input_shape = (num_classes,)
dim = 1


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return F.cross_entropy(predictions, targets)


def get_inputs():
    predictions = torch.rand(batch_size, *input_shape)
    targets = torch.randint(0, num_classes, (batch_size,))
    return [predictions, targets]


def get_init_inputs():
    return []
