extends Node
# agentsdk runtime bridge (Godot 4, GDScript 2). NOT exercised: no Godot 4 binary was available.
# Same wire protocol as gdscript/godot3/bridge.gd: 4-byte big-endian length + UTF-8 JSON,
# first frame {"op": "hello", "token": ..., "protocol": 1}. Until then a client may send one
# small frame within the hello timeout, or it is dropped.

const PROTOCOL := 1
const HARNESS := preload("res://addons/agentsdk_bridge/harness.gd")
const HELLO_MAX_BYTES := 4096
const FRAME_MAX_BYTES := 16 * 1024 * 1024
const MAX_WAITING := 8

var _server := TCPServer.new()
var _token := ""
var _hello_ms := 5000
var _clients: Array = []


func _ready() -> void:
	process_mode = Node.PROCESS_MODE_ALWAYS
	_token = OS.get_environment("AGENTSDK_GODOT_BRIDGE_TOKEN")
	var port := int(OS.get_environment("AGENTSDK_GODOT_BRIDGE_PORT"))
	if OS.get_environment("AGENTSDK_GODOT_BRIDGE_HELLO_MS") != "":
		_hello_ms = int(OS.get_environment("AGENTSDK_GODOT_BRIDGE_HELLO_MS"))
	if _token == "" or port <= 0:
		printerr("AGENTSDK: bridge not configured")
		return
	var err := _server.listen(port, "127.0.0.1")
	if err != OK:
		printerr("AGENTSDK: bridge cannot listen on port %d (error %d)" % [port, err])
		return
	printerr("AGENTSDK_BRIDGE_LISTENING %d" % port)


func _process(_delta: float) -> void:
	var now := Time.get_ticks_msec()
	while _server.is_connection_available():
		var peer := _server.take_connection()
		peer.big_endian = true
		if _clients.filter(func(c): return not c["authed"]).size() >= MAX_WAITING:
			peer.disconnect_from_host()
			continue
		_clients.append({"peer": peer, "authed": false, "buffer": PackedByteArray(), "since": now})
	for client in _clients.duplicate():
		if not client["authed"] and now - int(client["since"]) > _hello_ms:
			_drop(client)
		else:
			_pump(client)


func _drop(client: Dictionary) -> void:
	client["peer"].disconnect_from_host()
	_clients.erase(client)


static func _same_text(a: String, b: String) -> bool:
	var x := a.to_utf8_buffer()
	var y := b.to_utf8_buffer()
	var diff := x.size() ^ y.size()
	for i in range(mini(x.size(), y.size())):
		diff = diff | (x[i] ^ y[i])
	return diff == 0


func _pump(client: Dictionary) -> void:
	var peer: StreamPeerTCP = client["peer"]
	peer.poll()
	if peer.get_status() != StreamPeerTCP.STATUS_CONNECTED:
		_clients.erase(client)
		return
	var buffer: PackedByteArray = client["buffer"]
	var limit: int = FRAME_MAX_BYTES if client["authed"] else HELLO_MAX_BYTES
	var wanted := mini(peer.get_available_bytes(), 4 + limit - buffer.size())
	if wanted > 0:
		var got := peer.get_data(wanted)
		if got[0] == OK:
			buffer.append_array(got[1])
	while buffer.size() >= 4:
		var size := (buffer[0] << 24) | (buffer[1] << 16) | (buffer[2] << 8) | buffer[3]
		limit = FRAME_MAX_BYTES if client["authed"] else HELLO_MAX_BYTES
		if size > limit:
			if client["authed"]:
				_send(peer, {"ok": false, "error": "frame of %d bytes is over the %d byte limit" % [size, limit]})
			_drop(client)
			return
		if buffer.size() < 4 + size:
			break
		var text := buffer.slice(4, 4 + size).get_string_from_utf8()
		buffer = buffer.slice(4 + size)
		var request = JSON.parse_string(text)
		if typeof(request) != TYPE_DICTIONARY:
			_send(peer, {"ok": false, "error": "frame is not a JSON object"})
			if not client["authed"]:
				_drop(client)
				return
			continue
		if not client["authed"]:
			if request.get("op") != "hello" or not _same_text(str(request.get("token", "")), _token):
				_send(peer, {"ok": false, "error": "bad token"})
				peer.disconnect_from_host()
				_clients.erase(client)
				return
			if int(request.get("protocol", 0)) != PROTOCOL:
				_send(peer, {"ok": false, "error": "protocol %d not supported (server speaks %d)" % [int(request.get("protocol", 0)), PROTOCOL]})
				peer.disconnect_from_host()
				_clients.erase(client)
				return
			client["authed"] = true
			_send(peer, {"ok": true, "protocol": PROTOCOL, "engine": Engine.get_version_info()["string"]})
			continue
		var reply := _handle(request)
		reply["id"] = request.get("id")
		_send(peer, reply)
	client["buffer"] = buffer


func _send(peer: StreamPeerTCP, message: Dictionary) -> void:
	var body := JSON.stringify(message).to_utf8_buffer()
	peer.put_u32(body.size())
	peer.put_data(body)


func _node(path: String) -> Node:
	var scene := get_tree().current_scene
	if path == "" or path == ".":
		return scene
	var node: Node = scene.get_node_or_null(path) if scene != null else null
	if node == null:
		node = get_tree().root.get_node_or_null(path)
	return node


func _handle(request: Dictionary) -> Dictionary:
	var op: String = request.get("op", "")
	if op == "tree":
		var start := _node(str(request.get("path", "")))
		if start == null:
			return {"ok": false, "error": "no node at path %s" % request.get("path")}
		return {"ok": true, "result": HARNESS.describe(start, int(request.get("depth", 32)))}
	if op in ["get", "set", "call"]:
		var node := _node(str(request.get("path", "")))
		if node == null:
			return {"ok": false, "error": "no node at path %s" % request.get("path")}
		if op == "call":
			var method := str(request.get("method", ""))
			if not node.has_method(method):
				return {"ok": false, "error": "%s has no method %s" % [node.get_class(), method]}
			var args := []
			for literal in request.get("args", []):
				args.append(str_to_var(str(literal)))
			return {"ok": true, "result": HARNESS.value_text(node.callv(method, args))}
		var prop := str(request.get("property", ""))
		if not prop in node:
			return {"ok": false, "error": "%s has no property %s" % [node.get_class(), prop]}
		if op == "set":
			node.set(prop, str_to_var(str(request.get("value", ""))))
		return {"ok": true, "result": HARNESS.value_text(node.get(prop))}
	if op == "input":
		var action := str(request.get("action", ""))
		if not InputMap.has_action(action):
			return {"ok": false, "error": "unknown input action %s" % action}
		var pressed := bool(request.get("pressed", true))
		var event := InputEventAction.new()
		event.action = action
		event.pressed = pressed
		event.strength = float(request.get("strength", 1.0))
		if pressed:
			Input.action_press(action, event.strength)
		else:
			Input.action_release(action)
		Input.parse_input_event(event)
		return {"ok": true, "result": "%s %s" % [action, "pressed" if pressed else "released"]}
	if op == "screenshot":
		var image := get_viewport().get_texture().get_image()
		if image == null:
			return {"ok": false, "error": "no frame: the game runs without rendering (headless)"}
		var err := image.save_png(str(request.get("file", "")))
		if err != OK:
			return {"ok": false, "error": "cannot save the frame (error %d)" % err}
		return {"ok": true, "result": request.get("file")}
	if op == "ping":
		return {"ok": true, "result": "pong"}
	return {"ok": false, "error": "unknown op %s" % op}
