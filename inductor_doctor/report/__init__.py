"""`inductor-doctor report`: what a maintainer asks a reporter for, in one paste."""
