extends Node
# agentsdk runtime bridge (Godot 3). Added to the game as an autoload only for an agent
# session. Listens on 127.0.0.1; every frame is a 4-byte big-endian length and UTF-8 JSON.
# The first frame must be {"op": "hello", "token": ..., "protocol": 1}.
# Until then a client may send one small frame within the hello timeout, or it is dropped:
# whatever else listens on loopback (a browser, a port scanner) costs no memory.

const PROTOCOL = 1
const HARNESS = preload("res://addons/agentsdk_bridge/harness.gd")
const HELLO_MAX_BYTES = 4096  # the hello frame is ~100 bytes
const FRAME_MAX_BYTES = 16 * 1024 * 1024  # after the hello
const MAX_WAITING = 8  # connections that have not said hello yet

var _server = TCP_Server.new()
var _token = ""
var _hello_ms = 5000
var _clients = []
var _looking = null  # a screenshot whose visibility passes are being rendered


func _ready():
	pause_mode = Node.PAUSE_MODE_PROCESS
	_token = OS.get_environment("AGENTSDK_GODOT_BRIDGE_TOKEN")
	var port = int(OS.get_environment("AGENTSDK_GODOT_BRIDGE_PORT"))
	if OS.get_environment("AGENTSDK_GODOT_BRIDGE_HELLO_MS") != "":
		_hello_ms = int(OS.get_environment("AGENTSDK_GODOT_BRIDGE_HELLO_MS"))
	if _token == "" or port <= 0:
		printerr("AGENTSDK: bridge not configured")
		return
	var err = _server.listen(port, "127.0.0.1")
	if err != OK:
		printerr("AGENTSDK: bridge cannot listen on port %d (error %d)" % [port, err])
		return
	printerr("AGENTSDK_BRIDGE_LISTENING %d" % port)


func _process(_delta):
	var now = OS.get_ticks_msec()
	while _server.is_connection_available():
		var peer = _server.take_connection()
		peer.set_big_endian(true)
		if _waiting() >= MAX_WAITING:
			peer.disconnect_from_host()
			continue
		_clients.append({"peer": peer, "authed": false, "buffer": PoolByteArray(), "since": now})
	if _looking != null:
		_advance_look()
	for client in _clients.duplicate():
		if not client["authed"] and now - client["since"] > _hello_ms:
			_drop(client)
		else:
			_pump(client)


func _waiting():
	var count = 0
	for client in _clients:
		if not client["authed"]:
			count += 1
	return count


func _drop(client):
	client["peer"].disconnect_from_host()
	_clients.erase(client)


func _pump(client):
	var peer = client["peer"]
	if peer.get_status() != StreamPeerTCP.STATUS_CONNECTED:
		_clients.erase(client)
		return
	var limit = FRAME_MAX_BYTES if client["authed"] else HELLO_MAX_BYTES
	# pool arrays are copied on write: append to a local copy and store it back
	var buffer = client["buffer"]
	# never hold more than one frame's worth: the rest waits in the socket
	var wanted = int(min(peer.get_available_bytes(), 4 + limit - buffer.size()))
	if wanted > 0:
		var got = peer.get_data(wanted)
		if got[0] == OK:
			buffer.append_array(got[1])
	client["buffer"] = buffer
	while buffer.size() >= 4:
		var size = (buffer[0] << 24) | (buffer[1] << 16) | (buffer[2] << 8) | buffer[3]
		limit = FRAME_MAX_BYTES if client["authed"] else HELLO_MAX_BYTES
		if size > limit:
			if client["authed"]:
				_send(peer, {"ok": false, "error": "frame of %d bytes is over the %d byte limit" % [size, limit]})
			_drop(client)
			return
		if buffer.size() < 4 + size:
			break
		var text = buffer.subarray(4, 3 + size).get_string_from_utf8() if size > 0 else ""
		buffer = buffer.subarray(4 + size, buffer.size() - 1) if buffer.size() > 4 + size else PoolByteArray()
		client["buffer"] = buffer
		var parsed = JSON.parse(text)
		if parsed.error != OK or typeof(parsed.result) != TYPE_DICTIONARY:
			_send(peer, {"ok": false, "error": "frame is not a JSON object"})
			if not client["authed"]:
				_drop(client)
				return
			continue
		if not client["authed"]:
			_handshake(client, parsed.result)
			if not client["authed"]:
				return
			continue
		var request = parsed.result
		if request.get("op") == "screenshot" and bool(request.get("report", false)):
			_start_look(peer, request)  # answered when its passes are done
			continue
		var reply = _handle(request)
		reply["id"] = request.get("id")
		_send(peer, reply)


func _handshake(client, request):
	var peer = client["peer"]
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


static func _same_text(a, b):
	# compares every byte, so the time taken does not tell how much of a token was right
	var x = a.to_utf8()
	var y = b.to_utf8()
	var diff = x.size() ^ y.size()
	for i in range(min(x.size(), y.size())):
		diff = diff | (x[i] ^ y[i])
	return diff == 0


func _send(peer, message):
	var body = to_json(message).to_utf8()
	peer.put_u32(body.size())
	peer.put_data(body)


func _start_look(peer, request):
	if _looking != null:
		_send(peer, {"ok": false, "error": "a screenshot is being taken", "id": request.get("id")})
		return
	if get_viewport().get_texture().get_data() == null:
		_send(peer, {"ok": false, "error": "no frame: the game runs without rendering (headless)", "id": request.get("id")})
		return
	# freeze the game so the picture and its passes show the same moment
	_looking = {"peer": peer, "request": request, "state": 0, "was_paused": get_tree().paused}
	get_tree().paused = true


func _advance_look():
	var look = _looking
	var request = look["request"]
	if look["state"] == 0:
		var image = get_viewport().get_texture().get_data()
		image.flip_y()
		image.save_png(str(request.get("file", "")))
		var job = {"report_dir": str(request.get("report_dir", "")), "alone_limit": int(request.get("alone_limit", 32))}
		look["vision"] = HARNESS.VisionPass.new(get_tree().current_scene, get_tree().root, job)
		look["vision"].start()
		look["state"] = 1
		return
	if not look["vision"].advance():
		return
	get_tree().paused = look["was_paused"]
	_looking = null
	if look["peer"].get_status() == StreamPeerTCP.STATUS_CONNECTED:
		_send(look["peer"], {"ok": true, "result": request.get("file"), "id": request.get("id")})


func _node(path):
	var scene = get_tree().current_scene
	if path == "" or path == ".":
		return scene
	var node = scene.get_node_or_null(path) if scene != null else null
	if node == null:
		node = get_tree().root.get_node_or_null(path)
	return node


func _handle(request):
	var op = request.get("op", "")
	if op == "tree":
		var start = _node(str(request.get("path", "")))
		if start == null:
			return {"ok": false, "error": "no node at path %s" % request.get("path")}
		return {"ok": true, "result": HARNESS.describe(start, int(request.get("depth", 32)))}
	if op == "get" or op == "set" or op == "call":
		var node = _node(str(request.get("path", "")))
		if node == null:
			return {"ok": false, "error": "no node at path %s" % request.get("path")}
		if op == "call":
			var method = str(request.get("method", ""))
			if not node.has_method(method):
				return {"ok": false, "error": "%s has no method %s" % [node.get_class(), method]}
			var args = []
			for literal in request.get("args", []):
				args.append(str2var(str(literal)))
			return {"ok": true, "result": HARNESS.value_text(node.callv(method, args))}
		var prop = str(request.get("property", ""))
		if not prop in node:
			return {"ok": false, "error": "%s has no property %s" % [node.get_class(), prop]}
		if op == "set":
			var value = str2var(str(request.get("value", "")))
			node.set(prop, value)
		return {"ok": true, "result": HARNESS.value_text(node.get(prop))}
	if op == "input":
		var action = str(request.get("action", ""))
		if not InputMap.has_action(action):
			return {"ok": false, "error": "unknown input action %s (actions: %s)" % [action, PoolStringArray(InputMap.get_actions()).join(", ")]}
		var pressed = bool(request.get("pressed", true))
		var event = InputEventAction.new()
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
		var image = get_viewport().get_texture().get_data()
		if image == null:
			return {"ok": false, "error": "no frame: the game runs without rendering (headless)"}
		image.flip_y()
		var err = image.save_png(str(request.get("file", "")))
		if err != OK:
			return {"ok": false, "error": "cannot save the frame (error %d)" % err}
		return {"ok": true, "result": request.get("file")}
	if op == "ping":
		return {"ok": true, "result": "pong"}
	return {"ok": false, "error": "unknown op %s" % op}
