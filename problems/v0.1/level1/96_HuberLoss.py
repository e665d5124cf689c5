"""Smooth L1 (Huber, beta 1) loss with mean reduction."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32768
input_shape = (32768,)
dim = 1


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return F.smooth_l1_loss(predictions, targets)


def get_inputs():
    scale = torch.rand(())
    predictions = torch.rand(batch_size, *input_shape) * scale
    targets = torch.rand(batch_size, *input_shape)
    return [predictions, targets]


def get_init_inputs():
    return []
