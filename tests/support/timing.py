"""How long a test waits, on a laptop that is busy with other work (two CPU-bound processes beside
the suite, as .ci/run runs it).

A test never races a process's start: a timeout under test is injected and either far longer than
any start (it must not fire) or fires whatever the start took; an elapsed-time assert only says a
thing was *not waited out*, and the thing it was not waiting for lasts far longer than the bound.
"""

# Beyond this a call is taken to hang. A Python child took 27 s to start beside a busy llama.cpp
# server; a minute is past any start we have seen and still ends a hung test in reasonable time.
HANG_GUARD_S = 60.0

# What a test shows is not waited out lasts this long (a `sleep`, a server that never answers):
# twice the hang guard, so "returned before the guard" cannot be mistaken for "waited it out".
NEVER_S = 2 * HANG_GUARD_S

# A timeout under test that a command must outlive its own start for (it writes a pid file, sets a
# trap): bash starts in milliseconds idle and well under a second on the loaded laptop; ten
# seconds leaves that tenfold. Python is not started under such a timeout: its start took 27 s once.
GETS_GOING_S = 10.0
