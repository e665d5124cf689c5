"""One step of a vanilla RNN cell: hidden = tanh(Linear(cat(x, hidden))), output = Linear(hidden)."""
import torch
import torch.nn as nn

batch_size = 256
input_size = 16384
hidden_size = 16384
output_size = 8192
sequence_length = 256

# The random initial hidden state drawn in __init__ consumes RNG (before the weights) but is always
# overwritten by initial_hidden in forward.
QUIRKS = ["unused_parameters"]


class Model(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, output_size: int):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.output_size = output_size
        # plain tensor attribute (not a parameter or buffer), sized with the module-level batch_size
        self.hidden = torch.randn((batch_size, hidden_size))
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.tanh = nn.Tanh()

    def forward(self, x: torch.Tensor, initial_hidden=None) -> torch.Tensor:
        if initial_hidden is not None:
            self.hidden.copy_(initial_hidden)
        self.hidden = self.hidden.to(x.device)
        combined = torch.cat((x, self.hidden), dim=1)
        self.hidden = self.tanh(self.i2h(combined))
        return self.h2o(self.hidden)


def get_inputs():
    return [torch.rand(batch_size, input_size), torch.rand(batch_size, hidden_size)]


def get_init_inputs():
    return [input_size, hidden_size, output_size]
