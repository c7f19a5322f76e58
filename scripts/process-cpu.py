#!/usr/bin/env python3
"""CPU time per operation, by process name, over a stretch of a benchmark (Linux /proc).

    scripts/process-cpu.py snap FILE          remember every process's CPU time so far
    scripts/process-cpu.py report FILE COUNT  CPU spent since, in µs per operation (COUNT of them)
    scripts/process-cpu.py per FILE COUNT WHAT...
                                              bare figures on one line, one for each WHAT: the CPU
                                              in µs per operation of the processes PID[,PID...]
                                              (each one snapped and still running), or of the
                                              whole machine (`--machine`: every core's busy time
                                              from /proc/stat, every process on the host and the
                                              kernel's interrupts), or the cores the machine kept
                                              busy on average since the snap (`--cores`). A COUNT
                                              of 0 is an error.

`report` groups processes by name (PostgreSQL's backends all count as `postgres`); a process
that ended in between is not counted, so snap after the servers started and report before they
stop. `--cores` counts from the snap, so snap just before the run it measures.
"""
import json
import os
import sys
import time


def cpu_by_process():
    ticks = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as stat:
                line = stat.read()
        except OSError:
            continue
        name = line[line.index("(") + 1:line.rindex(")")]
        fields = line[line.rindex(")") + 2:].split()
        ticks[pid] = ("postgres" if name.startswith("postgres") else name, int(fields[11]) + int(fields[12]))
    return ticks


def machine_ticks():
    with open("/proc/stat") as stat:
        fields = stat.readline().split()
    return sum(int(fields[index]) for index in (1, 2, 3, 6, 7))  # user, nice, system, irq, softirq


def main():
    command, path = sys.argv[1], sys.argv[2]
    if command == "snap":
        with open(path, "w") as file:
            json.dump({"processes": cpu_by_process(), "machine": machine_ticks(), "at": time.monotonic()}, file)
        return
    with open(path) as file:
        before = json.load(file)
    count = float(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[3] else 0
    if count <= 0:
        sys.exit(f"process-cpu.py: no operations to share the CPU among ({sys.argv[3:4]})")
    per_tick = 1e6 / os.sysconf("SC_CLK_TCK")
    if command == "per":
        machine = (machine_ticks() - before["machine"]) * per_tick
        elapsed = time.monotonic() - before["at"]
        now = cpu_by_process() if any(what not in ("--machine", "--cores") for what in sys.argv[4:]) else {}
        figures = []
        for what in sys.argv[4:]:
            if what == "--machine":
                figures.append(machine / count)
            elif what == "--cores":
                figures.append(machine / 1e6 / elapsed)
            else:
                pids = what.split(",")
                gone = [pid for pid in pids if pid not in now or pid not in before["processes"]]
                if gone:
                    sys.exit(f"process-cpu.py: no process {', '.join(gone)} both at the snap and now")
                figures.append(sum(now[pid][1] - before["processes"][pid][1] for pid in pids) * per_tick / count)
        print(" ".join("%.2f" % figure for figure in figures))
        return
    now = cpu_by_process()
    spent = {}
    for pid, (name, ticks) in now.items():
        spent[name] = spent.get(name, 0) + ticks - before["processes"].get(pid, (name, 0))[1]
    busiest = sorted(((ticks, name) for name, ticks in spent.items() if ticks > 0), reverse=True)[:5]
    print("  CPU per send: " + ", ".join(f"{name} {ticks * per_tick / count:.0f} µs" for ticks, name in busiest))


if __name__ == "__main__":
    main()
