"""KL divergence (batchmean) between two row-wise softmax distributions."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16384
input_shape = (16384,)
dim = 1


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return F.kl_div(torch.log(predictions), targets, reduction="batchmean")


def get_inputs():
    scale = torch.rand(())
    predictions = (torch.rand(batch_size, *input_shape) * scale).softmax(dim=-1)
    targets = torch.rand(batch_size, *input_shape).softmax(dim=-1)
    return [predictions, targets]


def get_init_inputs():
    return []
