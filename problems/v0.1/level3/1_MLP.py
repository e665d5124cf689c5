"""Multi-layer perceptron: Linear+ReLU hidden layers from a size list, then a final Linear."""
import torch
import torch.nn as nn

batch_size = 128
input_size = 16384
layer_sizes = [16384, 16384]
output_size = 8192


class Model(nn.Module):
    def __init__(self, input_size, layer_sizes, output_size):
        super().__init__()
        layers = []
        current_input_size = input_size
        for layer_size in layer_sizes:
            layers.append(nn.Linear(current_input_size, layer_size))
            layers.append(nn.ReLU())
            current_input_size = layer_size
        layers.append(nn.Linear(current_input_size, output_size))
        self.network = nn.Sequential(*layers)

    def forward(self, x):
        return self.network(x)


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, layer_sizes, output_size]
