"""`inductor-doctor run -- CMD`: the command unchanged, and the diagnosis after it when it fails."""
