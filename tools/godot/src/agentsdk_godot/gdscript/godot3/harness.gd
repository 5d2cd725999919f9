extends SceneTree
# agentsdk harness (Godot 3): opens a scene, runs it for a number of frames or seconds,
# optionally saves screenshots and a dump of the scene tree, then quits.
# The job is a JSON file named by the AGENTSDK_GODOT_JOB environment variable.

var _job = {}
var _frames = 0
var _start_ms = 0
var _shots = []


func _init():
	var file = File.new()
	if file.open(OS.get_environment("AGENTSDK_GODOT_JOB"), File.READ) != OK:
		printerr("AGENTSDK: cannot read the job file")
		quit(3)
		return
	_job = parse_json(file.get_as_text())
	file.close()
	_shots = _job.get("capture_frames", [])
	var scene = _job.get("scene", "")
	if scene == "":
		scene = ProjectSettings.get_setting("application/run/main_scene")
	if scene == null or scene == "":
		printerr("AGENTSDK: no scene given and the project has no main scene")
		quit(3)
		return
	var packed = load(scene)
	if packed == null or not packed is PackedScene:
		printerr("AGENTSDK: cannot load scene ", scene)
		quit(3)
		return
	var node = packed.instance()
	if node == null:
		printerr("AGENTSDK: cannot instance scene ", scene)
		quit(3)
		return
	root.call_deferred("add_child", node)
	call_deferred("set_current_scene", node)
	_start_ms = OS.get_ticks_msec()
	print("AGENTSDK_STARTED")


func _idle(_delta):
	_frames += 1
	if _frames in _shots:
		_capture()
	var seconds = float(_job.get("seconds", 0.0))
	var frames = int(_job.get("frames", 0))
	var elapsed = (OS.get_ticks_msec() - _start_ms) / 1000.0
	if (frames > 0 and _frames >= frames) or (seconds > 0.0 and elapsed >= seconds):
		_finish()


func _capture():
	var image = root.get_texture().get_data()
	if image == null:
		printerr("AGENTSDK: no frame to capture (is this the headless server build?)")
		return
	image.flip_y()
	image.save_png("%s/frame_%d.png" % [_job["capture_dir"], _frames])


func _finish():
	if _job.get("tree_out", "") != "":
		var out = File.new()
		out.open(_job["tree_out"], File.WRITE)
		out.store_string(to_json(describe(current_scene, int(_job.get("tree_depth", 32)))))
		out.close()
	print("AGENTSDK_FINISHED frames=%d" % _frames)
	quit(0)


static func describe(node, depth):
	var info = {"name": node.name, "type": node.get_class(), "properties": {}, "children": []}
	var script = node.get_script()
	info["script"] = script.resource_path if script != null else ""
	var blank = ClassDB.instance(node.get_class())
	for prop in node.get_property_list():
		var usage = prop["usage"]
		var name = prop["name"]
		var wanted = usage & PROPERTY_USAGE_SCRIPT_VARIABLE
		if usage & PROPERTY_USAGE_STORAGE and blank != null and name != "script":
			wanted = wanted or typeof(blank.get(name)) != typeof(node.get(name)) or blank.get(name) != node.get(name)
		if wanted:
			info["properties"][name] = value_text(node.get(name))
	if blank != null and not blank is Reference:
		blank.free()
	if depth > 0:
		for child in node.get_children():
			info["children"].append(describe(child, depth - 1))
	return info


static func value_text(value):
	if typeof(value) == TYPE_OBJECT:
		if value == null:
			return "null"
		if value is Resource and value.resource_path != "":
			return "%s(\"%s\")" % [value.get_class(), value.resource_path]
		return "%s()" % value.get_class()
	return var2str(value)
