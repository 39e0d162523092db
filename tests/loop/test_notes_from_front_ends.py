"""A front end's note for the model (what /undo took back) is a tagged message of its own,
answered so the roles alternate, and never part of the user's words: the next request carries the
user's words alone, and nothing that reads "what the user said" (the session's prompts, /rewind's
list) takes the note for them."""

from __future__ import annotations

from nanohermes.loop.nudges import UNDONE
from nanohermes.storage.session import Session
from nanohermes.synthetic import SYNTHETIC, is_users
from tests.support.agents import make_agent
from tests.support.scripted_server import text


def test_an_undo_note_travels_tagged_beside_the_users_words(server, workspace, isolated_home):
    server.add(text("made it"), text("fine"))
    agent = make_agent(server, workspace, session_name="notes")
    agent.run_turn("make a file")
    agent.tell(UNDONE, "The user ran /undo: a.txt is back to its content before your write_file call.")
    agent.run_turn("what now?")
    *_, answer, note, ack, words = server.chat_requests()[-1]["messages"]
    assert words == {"role": "user", "content": "what now?"}
    assert note == {
        "role": "user",
        "content": "[The user ran /undo: a.txt is back to its content before your write_file call.]",
    }
    assert answer["role"] == ack["role"] == "assistant"
    kept = [m for m in agent.messages if m.get("role") == "user"]
    assert [m[SYNTHETIC] for m in kept if not is_users(m)] == [UNDONE]
    agent.session.close()
    with Session(isolated_home, "notes") as saved:  # read back: still tagged, and not a prompt of the user's
        assert [p.line for p in saved.state.prompts] == ["make a file", "what now?"]
        assert [m.get(SYNTHETIC) for m in saved.state.messages if m["role"] == "user"] == [None, UNDONE, None]
