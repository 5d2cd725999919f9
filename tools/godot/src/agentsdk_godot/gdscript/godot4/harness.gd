extends SceneTree
# agentsdk harness (Godot 4, GDScript 2). NOT exercised: no Godot 4 binary was available.
# Same job file and output as gdscript/godot3/harness.gd.

var _job := {}
var _frames := 0
var _start_ms := 0
var _shots := []
# the instanced scene: frames count only once the deferred add_child has put it in the tree
var _scene: Node = null


func _initialize() -> void:
	var file := FileAccess.open(OS.get_environment("AGENTSDK_GODOT_JOB"), FileAccess.READ)
	if file == null:
		printerr("AGENTSDK: cannot read the job file")
		quit(3)
		return
	_job = JSON.parse_string(file.get_as_text())
	_shots = _job.get("capture_frames", [])
	var scene: String = _job.get("scene", "")
	if scene == "":
		scene = ProjectSettings.get_setting("application/run/main_scene", "")
	if scene == "":
		printerr("AGENTSDK: no scene given and the project has no main scene")
		quit(3)
		return
	var packed = load(scene)
	if packed == null or not packed is PackedScene:
		printerr("AGENTSDK: cannot load scene ", scene)
		quit(3)
		return
	var node: Node = packed.instantiate()
	_scene = node
	root.add_child.call_deferred(node)
	set_deferred("current_scene", node)
	_start_ms = Time.get_ticks_msec()
	print("AGENTSDK_STARTED")


func _process(_delta: float) -> bool:
	if _scene == null or not _scene.is_inside_tree():
		return false
	_frames += 1
	if float(_frames) in _shots or _frames in _shots:
		_capture()
	var seconds := float(_job.get("seconds", 0.0))
	var frames := int(_job.get("frames", 0))
	var elapsed := (Time.get_ticks_msec() - _start_ms) / 1000.0
	if (frames > 0 and _frames >= frames) or (seconds > 0.0 and elapsed >= seconds):
		_finish()
	return false


func _capture() -> void:
	var image := root.get_texture().get_image()
	if image == null:
		printerr("AGENTSDK: no frame to capture (--headless has no rendering)")
		return
	image.save_png("%s/frame_%d.png" % [_job["capture_dir"], _frames])


func _finish() -> void:
	if _job.get("tree_out", "") != "":
		var out := FileAccess.open(_job["tree_out"], FileAccess.WRITE)
		out.store_string(JSON.stringify(describe(_scene, int(_job.get("tree_depth", 32)))))
		out.close()
	print("AGENTSDK_FINISHED frames=%d" % _frames)
	quit(0)


static func describe(node: Node, depth: int) -> Dictionary:
	var info := {"name": String(node.name), "type": node.get_class(), "properties": {}, "children": []}
	var script = node.get_script()
	info["script"] = script.resource_path if script != null else ""
	var blank = ClassDB.instantiate(node.get_class())
	for prop in node.get_property_list():
		var usage: int = prop["usage"]
		var name: String = prop["name"]
		var wanted := (usage & PROPERTY_USAGE_SCRIPT_VARIABLE) != 0
		if usage & PROPERTY_USAGE_STORAGE and blank != null and name != "script":
			var a = blank.get(name)
			var b = node.get(name)
			wanted = wanted or typeof(a) != typeof(b) or a != b
		if wanted:
			info["properties"][name] = value_text(node.get(name))
	if blank != null and blank is Node:
		blank.free()
	if depth > 0:
		for child in node.get_children():
			info["children"].append(describe(child, depth - 1))
	return info


static func value_text(value) -> String:
	if typeof(value) == TYPE_OBJECT:
		if value == null:
			return "null"
		if value is Resource and value.resource_path != "":
			return "%s(\"%s\")" % [value.get_class(), value.resource_path]
		return "%s()" % value.get_class()
	return var_to_str(value)
