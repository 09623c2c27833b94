"""Drives `rlctl mcp` with the official MCP Python SDK client (the `mcp` package), as an agent would.

Usage: python3 mcp_client.py SERVER_ARGV_JSON < STEPS_JSON > TRANSCRIPT_JSON

SERVER_ARGV_JSON is the server's command line as a JSON list (e.g. ["/path/rlctl", "mcp"]); the
server inherits this process's environment. STEPS_JSON is a list of steps, each one of:

  {"call": TOOL, "args": {...}, "save": NAME}   call a tool; "save" keeps its result's `confirm`
                                                token under NAME. In "args", a string "$NAME" is
                                                replaced by the token saved as NAME.
  {"write": PATH, "text": TEXT}                 write a file (changes the state between calls)

The transcript printed is {"tools": [names...], "calls": [{"tool", "args", "is_error",
"result"}...]}, each result the tool's text parsed as JSON.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def substitute(value, saved):
    if isinstance(value, str) and value.startswith("$"):
        return saved[value[1:]]
    if isinstance(value, dict):
        return {k: substitute(v, saved) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, saved) for v in value]
    return value


async def run(server_argv, steps):
    params = StdioServerParameters(
        command=server_argv[0], args=server_argv[1:], env=dict(os.environ)
    )
    transcript = {"tools": [], "calls": []}
    saved = {}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            for tool in tools.tools:
                # The wire's own names (inputSchema), whatever the SDK version calls them.
                wire = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
                transcript["tools"].append(
                    {
                        "name": wire["name"],
                        "input": wire["inputSchema"],
                        "annotations": wire.get("annotations", {}),
                    }
                )
            for step in steps:
                if "write" in step:
                    with open(step["write"], "w") as f:
                        f.write(step["text"])
                    continue
                args = substitute(step.get("args", {}), saved)
                result = await session.call_tool(step["call"], args)
                text = "".join(c.text for c in result.content if c.type == "text")
                try:
                    parsed = json.loads(text)
                except ValueError:
                    parsed = text
                if "save" in step and isinstance(parsed, dict) and "confirm" in parsed:
                    saved[step["save"]] = parsed["confirm"]
                transcript["calls"].append(
                    {
                        "tool": step["call"],
                        "args": args,
                        "is_error": bool(
                            result.model_dump(by_alias=True).get("isError")
                        ),
                        "result": parsed,
                    }
                )
    return transcript


def main():
    server_argv = json.loads(sys.argv[1])
    steps = json.load(sys.stdin)
    transcript = asyncio.run(asyncio.wait_for(run(server_argv, steps), timeout=900))
    json.dump(transcript, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
