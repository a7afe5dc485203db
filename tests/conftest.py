import gc
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))


def pytest_collection_finish(session):
    """What is imported and collected by now (torch, every test module) lives as long as the
    session: kept out of the cycle collector's reach, whose full passes then walk only what the
    tests make (gc.freeze; what the tests leave is collected as before)."""
    gc.freeze()


@pytest.fixture(autouse=True)
def _seed():
    import torch

    torch.manual_seed(0)
