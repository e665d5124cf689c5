"""Triplet margin loss (margin 1, p 2, mean) over anchor, positive and negative rows."""
import torch
import torch.nn as nn

batch_size = 32768
input_shape = (8192,)
dim = 1


class Model(nn.Module):
    def __init__(self, margin: float = 1.0):
        super().__init__()
        self.loss_fn = nn.TripletMarginLoss(margin=margin)

    def forward(self, anchor, positive, negative):
        return self.loss_fn(anchor, positive, negative)


def get_inputs():
    scale = torch.rand(())
    anchor = torch.rand(batch_size, *input_shape) * scale
    positive = torch.rand(batch_size, *input_shape)
    negative = torch.rand(batch_size, *input_shape)
    return [anchor, positive, negative]


def get_init_inputs():
    return [1.0]
