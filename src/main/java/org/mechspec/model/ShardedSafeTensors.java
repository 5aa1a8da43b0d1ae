package org.mechspec.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A sharded checkpoint: {@code model.safetensors.index.json}'s weight_map names the shard of every tensor. Every
 * shard is opened and validated; a tensor the map names must be in its shard, and a shard may hold no tensor the
 * map does not name.
 */
public final class ShardedSafeTensors implements TensorSource {
    private final Path indexFile;
    private final Map<String, SafeTensorsFile> shardOf;
    private final List<SafeTensorsFile> shards;

    private ShardedSafeTensors(Path indexFile, Map<String, SafeTensorsFile> shardOf, List<SafeTensorsFile> shards) {
        this.indexFile = indexFile;
        this.shardOf = shardOf;
        this.shards = shards;
    }

    public static ShardedSafeTensors open(Path indexFile) {
        JsonNode index;
        try {
            index = new ObjectMapper().readTree(indexFile.toFile());
        } catch (IOException e) {
            throw new SafeTensorsException(indexFile + ": unreadable index (" + e.getMessage() + ")", e);
        }
        JsonNode weightMap = index == null ? null : index.get("weight_map");
        if (weightMap == null || !weightMap.isObject() || weightMap.isEmpty()) {
            throw new SafeTensorsException(indexFile + ": no weight_map");
        }
        Map<String, SafeTensorsFile> files = new LinkedHashMap<>();
        Map<String, SafeTensorsFile> shardOf = new LinkedHashMap<>();
        try {
            for (Iterator<Map.Entry<String, JsonNode>> it = weightMap.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                String shardName = e.getValue().asText();
                if (shardName.contains("/") || shardName.contains("\\") || shardName.isEmpty()) {
                    throw new SafeTensorsException(indexFile + ": tensor " + e.getKey() + " maps to invalid shard name "
                            + e.getValue());
                }
                SafeTensorsFile shard = files.get(shardName);
                if (shard == null) {
                    shard = SafeTensorsFile.open(indexFile.resolveSibling(shardName));
                    files.put(shardName, shard);
                }
                if (!shard.names().contains(e.getKey())) {
                    throw new SafeTensorsException(indexFile + ": tensor " + e.getKey() + " is missing from shard "
                            + shardName);
                }
                shardOf.put(e.getKey(), shard);
            }
            for (SafeTensorsFile shard : files.values()) {
                for (String name : shard.names()) {
                    if (shardOf.get(name) != shard) {
                        throw new SafeTensorsException(shard.path() + ": tensor " + name
                                + " is not mapped to this shard by " + indexFile.getFileName());
                    }
                }
            }
        } catch (RuntimeException e) {
            files.values().forEach(SafeTensorsFile::close);
            throw e;
        }
        return new ShardedSafeTensors(indexFile, shardOf, new ArrayList<>(files.values()));
    }

    @Override
    public List<Path> files() {
        List<Path> out = new ArrayList<>();
        out.add(indexFile);
        for (SafeTensorsFile shard : shards) {
            out.add(shard.path());
        }
        return out;
    }

    @Override
    public List<String> names() {
        return List.copyOf(shardOf.keySet());
    }

    @Override
    public int[] shape(String name) {
        return shard(name).shape(name);
    }

    @Override
    public DType dtype(String name) {
        return shard(name).dtype(name);
    }

    @Override
    public void readInto(String name, Tensor target) {
        shard(name).readInto(name, target);
    }

    @Override
    public void close() {
        shards.forEach(SafeTensorsFile::close);
    }

    private SafeTensorsFile shard(String name) {
        SafeTensorsFile s = shardOf.get(name);
        if (s == null) {
            throw new SafeTensorsException("no tensor named " + name + " in the sharded checkpoint");
        }
        return s;
    }
}
