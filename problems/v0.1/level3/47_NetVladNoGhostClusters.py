"""NetVLAD pooling without ghost clusters: soft-assign features (BatchNorm + softmax), aggregate residuals."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2048
num_features = 100
num_clusters = 32
feature_size = 512
ghost_clusters = 0

QUIRKS = ["batchnorm_train_stats"]


class Model(nn.Module):
    def __init__(self, cluster_size, feature_size, ghost_clusters):
        super().__init__()
        self.feature_size = feature_size
        self.cluster_size = cluster_size
        self.ghost_clusters = ghost_clusters

        init_sc = 1 / math.sqrt(feature_size)
        clusters = cluster_size + ghost_clusters
        # (w, b) of the soft assignment; clusters2 holds the cluster centres
        self.clusters = nn.Parameter(init_sc * torch.randn(feature_size, clusters))
        self.batch_norm = nn.BatchNorm1d(clusters)
        self.clusters2 = nn.Parameter(init_sc * torch.randn(1, feature_size, cluster_size))
        self.out_dim = self.cluster_size * feature_size

    def forward(self, x, mask=None):
        """x: (B, N, D) -> (B, D*K)"""
        max_sample = x.size()[1]
        x = x.view(-1, self.feature_size)  # B x N x D -> BN x D

        if x.device != self.clusters.device:
            raise ValueError(f"x.device {x.device} != cluster.device {self.clusters.device}")

        assignment = torch.matmul(x, self.clusters)  # (BN x D) x (D x (K+G)) -> BN x (K+G)
        assignment = self.batch_norm(assignment)
        assignment = F.softmax(assignment, dim=1)  # BN x (K+G)
        assignment = assignment[:, :self.cluster_size]  # drop the ghost clusters
        assignment = assignment.view(-1, max_sample, self.cluster_size)  # B x N x K
        a_sum = torch.sum(assignment, dim=1, keepdim=True)  # B x 1 x K
        a = a_sum * self.clusters2

        assignment = assignment.transpose(1, 2)  # B x K x N
        x = x.view(-1, max_sample, self.feature_size)  # BN x D -> B x N x D
        vlad = torch.matmul(assignment, x)  # (B x K x N) x (B x N x D) -> B x K x D
        vlad = vlad.transpose(1, 2)  # B x D x K
        vlad = vlad - a

        # L2 intra-normalisation, then flatten and normalise again
        vlad = F.normalize(vlad)
        vlad = vlad.reshape(-1, self.cluster_size * self.feature_size)  # B x DK
        return F.normalize(vlad)


def get_inputs():
    return [torch.rand(batch_size, num_features, feature_size)]


def get_init_inputs():
    return [num_clusters, feature_size, ghost_clusters]
