extends SceneTree
# agentsdk class info (Godot 4, GDScript 2). NOT exercised: no Godot 4 binary was available.
# Written from Godot 4's class reference; same job file and answer as gdscript/godot3/classinfo.gd
# (type names come from type_string(): "String", "StringName", "NodePath", "Vector3" ...).


func _initialize() -> void:
	var file := FileAccess.open(OS.get_environment("AGENTSDK_GODOT_JOB"), FileAccess.READ)
	if file == null:
		printerr("AGENTSDK: cannot read the job file")
		quit(3)
		return
	var job: Dictionary = JSON.parse_string(file.get_as_text())
	var out := {"classes": {}, "scripts": {}, "colours": {}, "all_classes": []}
	if job.get("all_classes", false):
		out["all_classes"] = Array(ClassDB.get_class_list())
	for name in job.get("classes", []):
		out["classes"][name] = describe_class(name)
	for path in job.get("scripts", []):
		out["scripts"][path] = describe_script(path)
	for name in job.get("colours", []):
		out["colours"][name] = named_colour(name)
	var dump := FileAccess.open(job["out"], FileAccess.WRITE)
	dump.store_string(JSON.stringify(out))
	dump.close()
	quit(0)


static func describe_class(name: String) -> Dictionary:
	if not ClassDB.class_exists(name):
		return {"exists": false}
	var info := {
		"exists": true,
		"node": ClassDB.is_parent_class(name, "Node"),
		"resource": ClassDB.is_parent_class(name, "Resource"),
		"instantiable": ClassDB.can_instantiate(name),
		"inherits": [],
		"properties": [],
		"types": {},
		"resources": {},
		"enums": {},
	}
	var parent := String(ClassDB.get_parent_class(name))
	while parent != "":
		info["inherits"].append(parent)
		parent = String(ClassDB.get_parent_class(parent))
	var props: Array = ClassDB.class_get_property_list(name)
	if info["instantiable"]:
		var instance = ClassDB.instantiate(name)
		if instance != null:
			props += instance.get_property_list()
			if not instance is RefCounted:
				instance.free()
	for prop in props:
		var key: String = prop["name"]
		var heading: int = PROPERTY_USAGE_CATEGORY | PROPERTY_USAGE_GROUP | PROPERTY_USAGE_SUBGROUP
		if prop["usage"] & heading or info["types"].has(key):
			continue
		info["properties"].append(key)
		info["types"][key] = type_string(prop["type"])
		if prop["type"] == TYPE_OBJECT and prop["hint"] == PROPERTY_HINT_RESOURCE_TYPE:
			info["resources"][key] = resource_classes(prop["hint_string"])
		elif prop["type"] == TYPE_INT and prop["hint"] == PROPERTY_HINT_ENUM:
			info["enums"][key] = prop["hint_string"]
	return info


static func resource_classes(hint: String) -> Array:
	var found := []
	for base in hint.split(","):
		var family := [base] + Array(ClassDB.get_inheriters_from_class(base))
		for cls in family:
			if ClassDB.class_exists(cls) and ClassDB.can_instantiate(cls) and not cls in found:
				found.append(String(cls))
	return found


static func describe_script(path: String) -> Dictionary:
	var script = load(path)
	if script == null or not script is Script or not script.can_instantiate():
		return {"ok": false}
	var names := []
	var types := {}
	for prop in script.get_script_property_list():
		names.append(prop["name"])
		types[prop["name"]] = type_string(prop["type"])
	return {
		"ok": true,
		"base": String(script.get_instance_base_type()),
		"properties": names,
		"types": types,
	}


static func named_colour(name: String):
	# an alpha of -1 never comes out of a named colour: it means "not a name"
	var colour := Color.from_string(name.strip_edges(), Color(0, 0, 0, -1))
	if colour.a < 0:
		return null
	return [colour.r, colour.g, colour.b, colour.a]
