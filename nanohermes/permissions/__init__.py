"""What may run without a question, beyond the mode: rules and saved answers.

- rules.py (pure): `TOOL` / `TOOL:PATTERN` rules, allowed, asked or denied, and which decides a call;
- table.py: where rules come from ([permissions] in config.toml, the project's
  .nanohermes/config.toml, which may only ask and deny, and --allow/--deny);
- saved.py: a project's "always" answers, under the state directory.
loop/approvals.py puts them together with the mode, the sandbox and the session's answers.
"""
