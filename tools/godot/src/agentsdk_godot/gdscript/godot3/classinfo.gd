extends SceneTree
# agentsdk class info (Godot 3): which classes exist and what properties they and scripts have,
# so the toolkit can refuse `albedo_color` on a MeshInstance before writing it to a scene.
# The job is a JSON file named by AGENTSDK_GODOT_JOB: {"classes": [...], "scripts": [...], "out": path}.


func _init():
	var file = File.new()
	if file.open(OS.get_environment("AGENTSDK_GODOT_JOB"), File.READ) != OK:
		printerr("AGENTSDK: cannot read the job file")
		quit(3)
		return
	var job = parse_json(file.get_as_text())
	file.close()
	var out = {"classes": {}, "scripts": {}, "all_classes": []}
	if job.get("all_classes", false):
		out["all_classes"] = Array(ClassDB.get_class_list())
	for name in job.get("classes", []):
		out["classes"][name] = describe_class(name)
	for path in job.get("scripts", []):
		out["scripts"][path] = describe_script(path)
	var dump = File.new()
	dump.open(job["out"], File.WRITE)
	dump.store_string(to_json(out))
	dump.close()
	quit(0)


static func describe_class(name):
	if not ClassDB.class_exists(name):
		return {"exists": false}
	var info = {
		"exists": true,
		"node": ClassDB.is_parent_class(name, "Node"),
		"resource": ClassDB.is_parent_class(name, "Resource"),
		"instantiable": ClassDB.can_instance(name),
		"properties": [],
	}
	var props = ClassDB.class_get_property_list(name)
	if info["instantiable"]:
		# an instance also lists what it makes up itself (theme overrides: custom_colors/...)
		var instance = ClassDB.instance(name)
		if instance != null:
			props += instance.get_property_list()
			if not instance is Reference:
				instance.free()
	for prop in props:
		# every settable property (rotation has no editor usage), not the inspector's headings
		if not prop["usage"] & (PROPERTY_USAGE_CATEGORY | PROPERTY_USAGE_GROUP) and not prop["name"] in info["properties"]:
			info["properties"].append(prop["name"])
	return info


static func describe_script(path):
	var script = load(path)
	if script == null or not script is Script or not script.can_instance():
		return {"ok": false}
	var names = []
	for prop in script.get_script_property_list():
		names.append(prop["name"])
	return {"ok": true, "base": script.get_instance_base_type(), "properties": names}
