"""The files a user's request names, sent with it.

"Use the instructions in INSTRUCTIONS.md to change calc.py", "what does src/app.py do?",
"@notes.txt": a request that names a file of the workspace gets the file as read_file shows
it, so the model starts from the text, not from a guess (asked to follow INSTRUCTIONS.md,
Qwen2.5-Coder-1.5B's first call edited `print('Hello, world!')`, text it made up, and it never
opened the file). aider adds the files a message names to the chat the same way.

A name counts when it is a path inside the workspace to a regular text file — relative, or a
bare file name that exactly one file of the workspace has — written as a word of the request
(with or without a leading @). A directory counts when it is written with an @ (`@src/`): its
listing travels instead (the files .gitignore leaves in), as Claude Code attaches one. At most
MAX_FILES of them; each is capped as a read_file result is, and all of them at MAX_SHARE of
that, every cut noted with how to read the rest. An @ word that looks like a path (it holds a
dot or a slash) and names nothing is `missing_mentions`: the REPL says so before sending.

Names count only in words a person wrote (`Mentions`): the user's request, and a command file's
own text — never what a command printed (a `!cat notes.txt` line that says `@.env`), nor piped
text. A repository's command file (`.claude/commands/` of the workspace) names only files that
.gitignore leaves in: its `@.env` attaches nothing (the user's own `@.env`, typed, does). Every
target passes the repository-file rule (repo_files.py): inside the workspace, outside
NanoHermes's state directory and every hidden path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple

from nanohermes.errors import ImagesRefused, ToolError
from nanohermes.fileio import open_regular
from nanohermes.prompt.pasted import pasted_images
from nanohermes.repo_files import Boundary, RefusedFile
from nanohermes.text import FILES_HEADER, POINTS_TO_ATTACHMENT
from nanohermes.tools import ToolContext
from nanohermes.tools.files import read_file
from nanohermes.tools.images import SUFFIXES, image_result, named_as_image, sniff
from nanohermes.workspace import BINARY_SNIFF_BYTES, Listing, in_state_dir, is_ignored, list_workspace, state_dir

MAX_FILES = 4  # a request that names more is about them, not asking to read them all
MAX_SHARE = 2  # all files together: at most twice what one read_file result may hold
MIN_FILE_BYTES = 600  # below this, a file's share says nothing useful: it is left out
NOTE_RESERVE = 100  # bytes kept for a directory listing's "… N more files" line
HEADER = FILES_HEADER
# A word that may name a file: letters, digits and . _ - / (an @ before it is Claude Code's
# habit); it must hold a dot or a slash, so plain words are never looked up.
_WORD = re.compile(r"(?<![\w./-])@?([\w.-]*[\w-](?:/[\w.-]+)*)")
# `@word`, as Claude Code and Codex users write a path they mean: a directory may end in a slash.
_AT_WORD = re.compile(r"(?<![\w./-])@([\w./-]+)")
DIRECTORY_NOTE = "(the files .gitignore leaves in; glob with path= lists them again)"


@dataclass(frozen=True)
class Mentions:
    """The words a request's files may be named in: `typed`, what the user typed (any file of the
    workspace; also all the coaching keys on, loop/coach/); `authored`, a command file's own words —
    a repository's name only a file .gitignore leaves in, the user's own file's (`anywhere`) any file."""

    typed: str
    authored: str = ""
    anywhere: bool = False


def named_files(text: str, ctx: ToolContext, tracked_only: bool = False) -> list[str]:
    """Workspace-relative paths of the files `text` names, in the order named, at most MAX_FILES;
    a directory named with an @ ends in "/" (its listing is attached). Notes NanoHermes put before
    the user's words (`[The user ran /undo: …]` lines) don't count. `tracked_only`: a file or
    directory .gitignore leaves out is not named (a repository's command file)."""
    words = users_words(text)
    explicit = {m.group(1).rstrip(".") for m in _AT_WORD.finditer(words)}
    found: list[str] = []
    names = _Names(ctx)
    for match in _mention_words(words):
        word = match.rstrip(".")
        path = names.file(word, explicit=word in explicit)
        if path is None and word in explicit:
            path = names.directory(word)
        if path is not None and tracked_only and is_ignored(ctx.workspace, path):
            path = None
        if path is not None and path not in found:
            found.append(path)
        if len(found) == MAX_FILES:
            break
    return found


def mentioned(mentions: Mentions, ctx: ToolContext) -> list[str]:
    """The files both kinds of words name, the user's first, at most MAX_FILES."""
    typed = named_files(mentions.typed, ctx)
    tracked_only = not mentions.anywhere
    authored = named_files(mentions.authored, ctx, tracked_only) if mentions.authored.strip() else []
    return list(dict.fromkeys([*typed, *authored]))[:MAX_FILES]


def missing_mentions(text: str, ctx: ToolContext) -> list[str]:
    """The `@path` words of `text` that name no file or directory of the workspace, as written
    (`@notes` for a person or `@property` is no path: only a word with a dot or a slash counts)."""
    names = _Names(ctx)
    missing = []
    for match in _AT_WORD.finditer(users_words(text)):
        word = match.group(1).rstrip(".")
        if ("." in word or "/" in word) and names.file(word, explicit=True) is None and names.directory(word) is None:
            missing.append("@" + word)
    return list(dict.fromkeys(missing))


def _mention_words(words: str) -> list[str]:
    """Every word that may name a file, in order: plain words and @ words (a directory's slash kept)."""
    spans = sorted(
        [(m.start(1), m.group(1)) for m in _WORD.finditer(words)]
        + [(m.start(1), m.group(1)) for m in _AT_WORD.finditer(words)]
    )
    return list(dict.fromkeys(word for _, word in spans))


class _Names:
    """What a word names in the workspace; the listing is made once, when a bare name needs it."""

    def __init__(self, ctx: ToolContext):
        self.ctx = ctx
        self.boundary = Boundary.for_tools(ctx)
        self._listing: Listing | None = None

    def file(self, word: str, explicit: bool) -> str | None:
        """A regular file: by path, or by a bare name one file of the workspace has. A plain word
        must hold a dot or a slash (plain words are never looked up); an @ word need not (`@Makefile`)."""
        if not explicit and "." not in word and "/" not in word:
            return None
        path = _existing(self.ctx, word)
        if path is None and "/" not in word:
            same = [f for f in self.listing.files if f.rsplit("/", 1)[-1] == word]
            path = same[0] if len(same) == 1 else None
        return path if path is None or self.allowed(path) else None

    def allowed(self, path: str) -> bool:
        """The repository-file rule (repo_files.py): not a hidden path, whatever links lead there."""
        try:
            self.boundary.check(self.ctx.workspace / path)
        except RefusedFile:
            return False
        return True

    def directory(self, word: str) -> str | None:
        """A directory of the workspace, as `dir/` ("./" for the workspace itself)."""
        root = self.ctx.workspace.resolve()
        try:
            target = (root / word).resolve()
        except (OSError, ValueError):
            return None
        if not target.is_dir() or (target != root and root not in target.parents):
            return None
        if in_state_dir(target, self.ctx.home, root):
            return None
        shown = "./" if target == root else target.relative_to(root).as_posix() + "/"
        return shown if self.allowed(shown) else None

    @property
    def listing(self) -> Listing:
        if self._listing is None:
            self._listing = list_workspace(self.ctx.workspace, exclude=state_dir(self.ctx.home))
        return self._listing


def users_words(text: str) -> str:
    """`text` without the bracketed notes the REPL puts before the user's words."""
    lines = text.splitlines()
    while lines and (not lines[0].strip() or (lines[0].startswith("[") and lines[0].rstrip().endswith("]"))):
        lines.pop(0)
    return "\n".join(lines)


def _existing(ctx: ToolContext, word: str) -> str | None:
    """`word` as a workspace-relative path to a regular file, or None."""
    root = ctx.workspace.resolve()
    try:
        target = (root / word).resolve()
    except (OSError, ValueError):
        return None
    if root not in target.parents or not target.is_file() or in_state_dir(target, ctx.home, root):
        return None
    return target.relative_to(root).as_posix()


class Attachment(NamedTuple):
    block: str  # the files as read_file shows them, under HEADER ("" for none)
    attached: dict[str, str]  # path -> what was attached of it
    images: list[dict]  # the images among them, as the message carries them (context/images.py)


def attachment(text: str, ctx: ToolContext, mentions: Mentions | None = None) -> Attachment:
    """What travels with the request: each file named in `mentions` (None: all of `text` is the
    user's words) as read_file shows it, an image as the image (its line in the block), and an
    image the user pasted the path of (prompt/pasted.py). A file that cannot be read (binary, too
    large) is left out; an image that cannot be sent is ImagesRefused: the request is not sent."""
    mentions = mentions or Mentions(text)
    paths = mentioned(mentions, ctx)
    budget = ctx.max_output * MAX_SHARE
    parts, attached, images = [], {}, []
    for i, path in enumerate(paths):
        share = min(ctx.max_output, budget // (len(paths) - i))  # what a short file leaves goes to the next
        if share < MIN_FILE_BYTES:
            break
        try:
            shown = directory_listing(ctx, path, share) if path.endswith("/") else _read(ctx, path, share, images)
        except ToolError:
            continue
        parts.append(shown)
        attached[path] = shown
        budget -= len(shown.encode("utf-8"))
    root = ctx.workspace.resolve()
    named = {(root / path).resolve() for path in attached}
    pasted = [p for p in pasted_images(mentions.typed, ctx, SUFFIXES) if p not in named]
    for target in pasted[: max(0, MAX_FILES - len(paths))]:
        name = target.relative_to(root).as_posix() if root in target.parents else str(target)
        shown = _image(ctx, target, name, images)
        if shown is not None:
            parts.append(shown)
            attached[name] = shown
    return Attachment(("\n\n".join([HEADER, *parts]) if parts else ""), attached, images)


def _read(ctx: ToolContext, path: str, share: int, images: list[dict]) -> str:
    """A named file as read_file shows it; an image's line, its entry added to `images`."""
    target = ctx.workspace.resolve() / path
    image = _image(ctx, target, path, images)
    return image if image is not None else str(read_file.func(replace(ctx, max_output=share), path=path))


def _image(ctx: ToolContext, target: Path, shown: str, images: list[dict]) -> str | None:
    """The line of an image file (by its bytes), its entry added to `images`; None for another file.
    ImagesRefused when it cannot be sent, or is named as an image and is none."""
    try:
        with open_regular(target) as f:
            head = f.read(BINARY_SNIFF_BYTES)
    except OSError:
        return None  # read_file says what is wrong with it
    mime = sniff(head)
    if mime is None:
        if named_as_image(shown):
            raise ImagesRefused(
                f"Your request was not sent: {shown} is named as an image, but its bytes are no PNG, JPEG, GIF "
                "or WebP image."
            )
        return None
    try:
        line, entry = image_result(ctx, target, shown, mime)
    except ToolError as exc:
        raise ImagesRefused(f"Your request was not sent: {exc}.") from None
    images.append(entry)
    return line


def directory_listing(ctx: ToolContext, directory: str, max_bytes: int) -> str:
    """`directory` ("dir/", or "./" for the workspace) as the files in it, one path a line,
    within max_bytes; a cut says how many were left out and how to list them."""
    listing = list_workspace(ctx.workspace, exclude=state_dir(ctx.home))
    files = listing.under("" if directory == "./" else directory)
    more_scan = "" if listing.complete else " (the listing stopped at the scan limit)"
    head = f"directory {directory}: {len(files)} file{'s' if len(files) != 1 else ''}{more_scan} {DIRECTORY_NOTE}"
    lines, used = [head], len(head.encode("utf-8")) + NOTE_RESERVE
    for i, path in enumerate(files):
        used += len(path.encode("utf-8")) + 1
        if used > max_bytes:
            lines.append(f"… {len(files) - i} more files not shown (glob path={directory} pattern=** lists them)")
            break
        lines.append(path)
    return "\n".join(lines)


def already_attached(shown: str) -> str:
    """What a read_file of an attached file says when it would show the same text again."""
    return shown.split("\n", 1)[0] + POINTS_TO_ATTACHMENT
