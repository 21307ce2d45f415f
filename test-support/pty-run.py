"""Runs a command in a pseudo-terminal of a given size, as a person's terminal would run it, and
writes everything it printed (the raw bytes, escape sequences included) to a file.

    python3 test-support/pty-run.py COLUMNS ROWS OUTPUT_FILE -- COMMAND [ARGS...]

Exits with the command's exit status (128 + signal when a signal ended it). Killed with SIGTERM,
it passes SIGTERM on to the command's process group (the command leads its own session).
"""
import fcntl
import os
import pty
import signal
import struct
import sys
import termios


def main() -> int:
    columns, rows, output_file = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    command = sys.argv[sys.argv.index("--") + 1:]
    pid, master = pty.fork()
    if pid == 0:
        fcntl.ioctl(sys.stdout.fileno(), termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        os.execvp(command[0], command)
    def stop(signum, _frame):
        # Killed (a test's time limit): take the command and its whole process group along.
        try:
            os.killpg(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    with open(output_file, "wb") as output:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            output.write(chunk)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) if os.waitstatus_to_exitcode(status) >= 0 else 128 - os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main())
