"""DenseNet-121: conv stem, dense blocks [6, 12, 24, 16] joined by transition layers, BN+ReLU, pool, classifier."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 10
num_classes = 10
height, width = 224, 224

QUIRKS = ["batchnorm_train_stats"]


class DenseBlock(nn.Module):
    def __init__(self, num_layers: int, num_input_features: int, growth_rate: int):
        super().__init__()
        self.layers = nn.ModuleList(
            [self._make_layer(num_input_features + i * growth_rate, growth_rate) for i in range(num_layers)])

    def _make_layer(self, in_features: int, growth_rate: int):
        return nn.Sequential(
            nn.BatchNorm2d(in_features),
            nn.ReLU(inplace=True),
            nn.Conv2d(in_features, growth_rate, kernel_size=3, padding=1, bias=False),
            nn.Dropout(0.0),  # p=0: identity even in training mode
        )

    def forward(self, x):
        features = [x]
        for layer in self.layers:
            new_feature = layer(x)
            features.append(new_feature)
            x = torch.cat(features, 1)
        return x


class TransitionLayer(nn.Module):
    def __init__(self, num_input_features: int, num_output_features: int):
        super().__init__()
        self.transition = nn.Sequential(
            nn.BatchNorm2d(num_input_features),
            nn.ReLU(inplace=True),
            nn.Conv2d(num_input_features, num_output_features, kernel_size=1, bias=False),
            nn.AvgPool2d(kernel_size=2, stride=2),
        )

    def forward(self, x):
        return self.transition(x)


class Model(nn.Module):
    block_layers = [6, 12, 24, 16]

    def __init__(self, growth_rate: int = 32, num_classes: int = 1000):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, kernel_size=7, stride=2, padding=3, bias=False),
            nn.BatchNorm2d(64),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2, padding=1),
        )
        num_features = 64
        self.dense_blocks = nn.ModuleList()
        self.transition_layers = nn.ModuleList()
        # Blocks and transitions are built interleaved (RNG order) but live in two ModuleLists (state_dict order).
        for i, num_layers in enumerate(self.block_layers):
            self.dense_blocks.append(DenseBlock(num_layers, num_features, growth_rate))
            num_features = num_features + num_layers * growth_rate
            if i != len(self.block_layers) - 1:
                self.transition_layers.append(TransitionLayer(num_features, num_features // 2))
                num_features = num_features // 2
        self.final_bn = nn.BatchNorm2d(num_features)
        self.classifier = nn.Linear(num_features, num_classes)

    def forward(self, x):
        x = self.features(x)
        for i, block in enumerate(self.dense_blocks):
            x = block(x)
            if i != len(self.dense_blocks) - 1:
                x = self.transition_layers[i](x)
        x = self.final_bn(x)
        x = F.relu(x, inplace=True)
        x = F.adaptive_avg_pool2d(x, (1, 1)).view(x.size(0), -1)
        return self.classifier(x)


def get_inputs():
    return [torch.rand(batch_size, 3, height, width)]


def get_init_inputs():
    return [32, num_classes]
