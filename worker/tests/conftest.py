import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture(scope="session")
def build_dir(tmp_path_factory) -> Path:
    """One TORCH_EXTENSIONS_DIR for the whole session, so each extension builds once."""
    return tmp_path_factory.mktemp("torch-extensions")


@pytest.fixture
def write(tmp_path):
    """write("name.py", source) -> the file's path under tmp_path."""

    def write_file(name: str, source: str) -> Path:
        path = tmp_path / name
        path.write_text(source)
        return path

    return write_file
