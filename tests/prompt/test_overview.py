"""The workspace overview (prompt/overview.py): what the first request says the workspace holds."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from nanohermes.prompt.overview import OVERVIEW_MAX_CHARS, workspace_overview
from nanohermes.workspace import Listing


def test_a_small_workspace_is_listed_file_by_file():
    listing = Listing(("README.md", "config/settings.ini", "service/app.py"))
    assert workspace_overview(listing) == "Workspace files (3): README.md, config/settings.ini, service/app.py"


def test_a_large_workspace_is_summarised_as_directories_with_counts():
    files = [f"src/pkg/m{i}.py" for i in range(300)] + [f"src/cli/c{i}.py" for i in range(20)]
    files += [f"tests/t{i}.py" for i in range(40)] + ["README.md", "pyproject.toml"]
    overview = workspace_overview(Listing(tuple(sorted(files))))
    assert overview == (
        "Workspace files: 362 (glob or grep to see more). Top level: README.md, pyproject.toml. "
        "Directories (files): src/ (320), src/pkg/ (300), src/cli/ (20), tests/ (40)."
    )


def test_an_incomplete_listing_says_there_are_more():
    overview = workspace_overview(Listing(tuple(f"f{i}.txt" for i in range(5)), complete=False))
    assert overview.startswith("Workspace files: 5+ (glob or grep to see more).")


def test_an_empty_workspace_says_so():
    assert workspace_overview(Listing(())) == "Workspace files: none (the workspace is empty)."


names = st.from_regex(r"[a-z]{1,20}(/[a-z]{1,20}){0,4}\.[a-z]{1,3}", fullmatch=True)


@settings(max_examples=80, deadline=None)
@given(files=st.lists(names, max_size=600, unique=True), complete=st.booleans())
def test_the_overview_is_capped_and_the_same_for_the_same_files(files, complete):
    listing = Listing(tuple(sorted(files)), complete)
    overview = workspace_overview(listing)
    assert len(overview) <= OVERVIEW_MAX_CHARS
    assert overview == workspace_overview(Listing(tuple(sorted(files)), complete))
