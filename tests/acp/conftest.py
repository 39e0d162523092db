"""What the ACP tests share: a workspace with one file in it."""

import pytest

from tests.support.acp_client import workspace


@pytest.fixture
def ws(tmp_path):
    return workspace(tmp_path, "the secret is 42\n")
