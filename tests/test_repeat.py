"""The timed bitwise repeat: a timed call and its twin, on the same inputs with one secretly drawn value redrawn, must
be bitwise equal wherever that value cannot reach (told by a tangent carried through the reference)."""
from __future__ import annotations

import torch


def test_the_timed_repeat_compares_only_what_the_redrawn_place_cannot_reach():
    """The twin of a timed call redraws one input value: every output a NaN tangent at that place reaches (through
    forward-mode AD of the reference) is left out, so an honest LayerNorm whose own reduction order rounds the
    changed sample differently is not flagged, while a kernel that varies from run to run is, wherever it varies."""
    from kb_data.harness.checks import reached, repeat_differs, twin_inputs

    torch.manual_seed(0)
    ref = torch.nn.LayerNorm((8, 64, 64))

    def manual(x):
        mean = x.mean(dim=(1, 2, 3), keepdim=True)
        return (x - mean) * torch.rsqrt((x - mean).square().mean(dim=(1, 2, 3), keepdim=True) + ref.eps)

    def racy(x):
        y = manual(x)
        return (y.view(torch.int32) ^ torch.randint(0, 2, y.shape, dtype=torch.int32)).view(torch.float32)

    x = torch.randn(4, 8, 64, 64)
    donor = torch.randn_like(x)
    twin, where = twin_inputs([x], [donor])
    assert where is not None and int((twin[0] != x).sum()) == 1
    # the place moved is the one of its secret draw the donor moves most: a replay of the first output is wrong there
    moves = [float((twin_inputs([x], [donor])[0][0] - x).abs().max()) for _ in range(20)]
    assert min(moves) > 0.5, moves  # the largest of 32 differences of two standard normals: under 0.5 with odds ~1e-18
    reach = reached(ref, [x], where, rng=0)
    assert [m.any(dim=(1, 2, 3)).sum().item() for m in reach] == [1]  # the sample holding the place
    with torch.no_grad():
        r1, r2 = ref(x), ref(twin[0])
        assert repeat_differs(([manual(x)], r1), ([manual(twin[0])], r2), reach) is None
        assert "differ bitwise" in repeat_differs(([racy(x)], r1), ([racy(twin[0])], r2), reach)


def test_a_reference_that_multiplies_by_exact_zeros_leaves_the_twin_values_to_compare():
    """0 x NaN is NaN: a reference holding a sparse matrix dense spreads the twin's NaN tangent to every output, and
    the timed repeat compared nothing, so a matvec that sums each row in a new order every call passed it (red team,
    session 35, a sparse matvec). Where the NaN reaches everything, a float64 copy of the reference with a tangent of
    one tells the products with exact zeros apart; a reduction of everything still reaches everything."""
    from kb_data.harness.checks import reached, repeat_differs, twin_inputs

    class SparseHeldDense(torch.nn.Module):
        def __init__(self):
            super().__init__()
            g = torch.Generator().manual_seed(3)
            a = torch.zeros(64, 64)
            for row in a:
                row[torch.randperm(64, generator=g)[:16]] = torch.randn(16, generator=g)
            self.register_buffer("a", a)

        def forward(self, x):
            return self.a @ x

    def racy(ref, x, seed):  # each row's sixteen products summed in an order of its own draw
        g, out = torch.Generator().manual_seed(seed), torch.empty(64, 1)
        for i, row in enumerate(ref.a):
            terms = (row * x[:, 0])[row != 0]
            out[i, 0] = terms[torch.randperm(len(terms), generator=g)].sum()
        return out

    ref = SparseHeldDense()
    x = torch.randn(64, 1)
    twin, where = twin_inputs([x], [torch.randn(64, 1)])
    assert bool(reached(ref, [x], where, rng=0)[0].all())  # the NaN alone: nothing left to compare
    reach = reached(ref, [x], where, 0, SparseHeldDense)
    assert torch.equal(reach[0].view(-1), ref.a[:, where[1]] != 0)
    with torch.no_grad():
        r1, r2 = ref(x), ref(twin[0])
        honest = lambda inputs: ref.a @ inputs
        assert repeat_differs(([honest(x)], r1), ([honest(twin[0])], r2), reach) is None
        assert "differ bitwise" in repeat_differs(([racy(ref, x, 1)], r1), ([racy(ref, twin[0], 2)], r2), reach)

    class Total(torch.nn.Module):
        def forward(self, x):
            return x.sum().reshape(1)

    assert bool(reached(Total(), [x], where, 0, Total)[0].all())
