"""`python -m inductor_doctor` is the same as the `inductor-doctor` console script."""

from inductor_doctor._entry import main

if __name__ == "__main__":
    raise SystemExit(main())
