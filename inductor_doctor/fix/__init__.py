"""`inductor-doctor fix`: the last check's workarounds as commands, the verified ones apart."""
