from nodeflow_app.contract import NodeDefinition, Socket

definition = NodeDefinition(
    id="chat-start",
    name="Chat Start",
    description="Start a run with each message sent in the graph's chat.",
    category="trigger",
    icon="message-square",
    trigger=True,
    started_by=("chat", "api"),  # the run API's input is the message
    example_payload={"message": "Hello! This is a test run from the editor.", "attachments": []},
    outputs=(Socket(id="output", label="Message", side="right",
                    description="{message, chat_id, attachments}"),),
)
