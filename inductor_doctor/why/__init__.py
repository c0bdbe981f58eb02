"""`inductor-doctor why -- CMD`: which controlled variation flips a failing command."""
