"""An agent's session with `pr-monitor mcp`, through the official MCP Python SDK's stdio client.

Run by tests/it/mcp.rs as `python mcp_client.py MESSAGE_ID THREAD_ID -- COMMAND ARGS...` with the
server's environment. It prints one JSON object per line: the results it saw, then `"waiting"`
when it is ready for a new inbox message (the test then runs a tick and says so on stdin), and
last `{"list_changed": true}` once the server announced it.
"""

import json
import os
import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def say(value):
    print(json.dumps(value), flush=True)


def method_of(message):
    for candidate in (message, getattr(message, "root", None)):
        method = getattr(candidate, "method", None)
        if isinstance(method, str):
            return method
    return type(message).__name__


async def main():
    message_id, thread_id = sys.argv[1], sys.argv[2]
    command = sys.argv[sys.argv.index("--") + 1 :]
    changed = anyio.Event()

    async def on_message(message):
        if method_of(message) in ("notifications/resources/list_changed", "ResourceListChangedNotification"):
            changed.set()

    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, message_handler=on_message) as session:
            init = await session.initialize()
            tools = await session.list_tools()
            listed = await session.call_tool("inbox_list", {})
            message = await session.call_tool("inbox_read", {"id": message_id})
            resources = await session.list_resources()
            pr = message.structured_content["pr"]["url"]
            reply = await session.call_tool(
                "thread_reply", {"pr": pr, "thread": thread_id, "body": "Done, from Python."}
            )
            resolve = await session.call_tool("thread_resolve", {"pr": pr, "thread": thread_id})
            bad = await session.call_tool("inbox_read", {"id": "no-such-message"})
            done = await session.call_tool("inbox_done", {"id": message_id})
            say(
                {
                    "protocol_version": init.protocol_version,
                    "server": init.server_info.name,
                    "tools": [t.name for t in tools.tools],
                    "descriptions": [t.description for t in tools.tools],
                    "listed": listed.structured_content,
                    "message_kind": message.structured_content["kind"],
                    "resources": [str(r.uri) for r in resources.resources],
                    "reply": reply.structured_content,
                    "resolve": resolve.structured_content,
                    "bad_is_error": bad.is_error,
                    "bad_says": bad.content[0].text,
                    "done": done.structured_content,
                }
            )
            say("waiting")
            await anyio.to_thread.run_sync(sys.stdin.readline)
            with anyio.fail_after(20):
                await changed.wait()
            say({"list_changed": True})


anyio.run(main)
